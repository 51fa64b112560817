#!/usr/bin/env bash
# Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<reader>/):
# a few tiny valid files of each format and a few near misses. Deterministic;
# bash, printf, head and gzip only.
#   tests/fuzz/make_seeds.sh tests/fuzz/corpus
set -eu   # no pipefail: `... | head -c N` truncations end their writer with SIGPIPE
C=${1:-tests/fuzz/corpus}
rm -rf "$C"
mkdir -p "$C"/{npy,idx,cifar,partition,model_csv,text,tokens,safetensors,llama_hf,gpt2_hf}

# bytes N SEED: N deterministic bytes
bytes() { local i; for ((i = 0; i < $1; i++)); do printf "\\x$(printf %02x $(((i * 37 + $2) % 256)))"; done; }
le16() { printf "\\x$(printf %02x $(($1 & 255)))\\x$(printf %02x $(($1 >> 8)))"; }
be32() { printf "\\x$(printf %02x $(($1 >> 24 & 255)))\\x$(printf %02x $(($1 >> 16 & 255)))\\x$(printf %02x $(($1 >> 8 & 255)))\\x$(printf %02x $(($1 & 255)))"; }

# ---- .npy: magic, version 1.0, header length, dict, data
npy() { local dict=$2 n=$3; { printf '\x93NUMPY\x01\x00'; le16 ${#dict}; printf '%s' "$dict"; bytes "$n" 3; } >"$C/npy/$1"; }
npy vec3 "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }"$'\n' 24
npy mat22 "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }"$'\n' 32
npy empty03 "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 3), }"$'\n' 0
npy dquote "{\"shape\": (1,2,1), \"descr\": \"<f8\", \"fortran_order\": False}"$'\n' 16
npy fortran "{'descr': '<f8', 'fortran_order': True, 'shape': (2,), }"$'\n' 16
npy int4 "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }"$'\n' 8
npy huge "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }"$'\n' 16
npy trailing "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }"$'\n' 12
npy extra_key "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'x': 1}"$'\n' 8

# ---- IDX: 2-byte length of the image file, the image file, then the label file
idx_images() { be32 0x803; be32 "$1"; be32 "$2"; be32 "$3"; bytes $(($1 * $2 * $3)) 5; }
idx_labels() { be32 0x801; be32 "$1"; local i; for ((i = 0; i < $1; i++)); do printf "\\x0$((i % 10))"; done; }
idx_pair() { local f=$1 img lab; img=$(mktemp); lab=$(mktemp)
  cat >"$img"; idx_labels "$2" >"$lab"
  [ "${3:-}" = gz ] && { gzip -9 -n -c "$img" >"$img.gz"; mv "$img.gz" "$img"; gzip -9 -n -c "$lab" >"$lab.gz"; mv "$lab.gz" "$lab"; }
  { le16 "$(stat -c %s "$img")"; cat "$img" "$lab"; } >"$C/idx/$f"; rm -f "$img" "$lab"; }
idx_images 3 2 2 | idx_pair plain 3
idx_images 3 2 2 | idx_pair gz 3 gz
idx_images 2 3 1 | idx_pair count_mismatch 3
{ idx_images 3 2 2; printf '\x07'; } | idx_pair trailing 3
idx_images 3 2 2 | head -c 20 | idx_pair truncated 3
{ be32 0x803; be32 0xFFFFFFFF; be32 2; be32 2; bytes 12 5; } | idx_pair count_ffffffff 3
{ be32 0x803; be32 0x7FFFFFFF; be32 4096; be32 4096; bytes 12 5; } | idx_pair huge_gz 3 gz

# ---- CIFAR: one byte (low bit: CIFAR-100), then records (labels, 3072 pixels)
cifar() { local c100=$1 n=$2 i; printf "\\x0$c100"; for ((i = 0; i < n; i++)); do
  [ "$c100" = 1 ] && printf "\\x0$((i % 20 % 10))"; printf "\\x0$((i % 10))"; bytes 3072 "$i"; done; }
cifar 0 1 >"$C/cifar/c10_one"
cifar 1 2 >"$C/cifar/c100_two"
{ printf '\x00'; cifar 0 2 | tail -c +2 | gzip -9 -n -c; } >"$C/cifar/c10_gz"
cifar 0 1 | head -c 3000 >"$C/cifar/c10_truncated"
printf '\x00' >"$C/cifar/empty"

# ---- partition files for the fuzz model (P = 72: wte 0..31, q 32..47, v 48..63, ln 64..67, b 68..71)
printf 'all 0 72\n' >"$C/partition/one_block"
printf '# per tensor\nwte 0 32\nq 32 16\nv 48 16\nln 64 4\nb 68 4\n' >"$C/partition/tensors"
printf 'q[h0] 32 8\nq[h1] 40 8\nrest 0 32\nmore 48 24 # tail\n' >"$C/partition/heads"
printf 'evens 0 36 2\nodds 1 36 2\n' >"$C/partition/strided"
printf 'all 0 72 1 junk\n' >"$C/partition/extra_field"
printf 'all 0 72 -1\n' >"$C/partition/negative_stride"
printf 'a 0 40\nb 39 33\n' >"$C/partition/overlap"

# ---- mlp_hessian's model.csv (the fixed folder is in 3, width 2, classes 2, bias 1: P = 14)
H='in,width,classes,act,bias,loss,P'
printf '%s\n3,2,2,tanh,1,xent,14\n' "$H" >"$C/model_csv/valid"
printf '%s\n3,1,5,relu,1,squared,14\n' "$H" >"$C/model_csv/valid_other_sizes"
printf '%s\n3,2,2,tanh,1,xent,15\n' "$H" >"$C/model_csv/wrong_P"
printf '%s\n3,2,2,gelu,0,xent,10\n' "$H" >"$C/model_csv/no_bias"
printf '%s\n3,2,2,tanh,1,xent,14 junk\n' "$H" >"$C/model_csv/junk"
printf 'in,width\n3,2\n' >"$C/model_csv/short"

# ---- text: a byte for V, a byte for T, then the text (its last 10% held out)
{ printf '\xfe\x07'; for i in 1 2 3 4 5 6; do printf 'hello, tiny transformer %d\n' "$i"; done; } >"$C/text/hello"
printf '\x00\x01abababababababababababab' >"$C/text/two_symbols"
printf '\x02\x1fshort' >"$C/text/too_short"
{ printf '\xff\x03'; bytes 300 1; } >"$C/text/all_bytes"
{ printf '\x05\x02'; bytes 40 2; } >"$C/text/top_five"

# ---- nanoGPT token files: 2 bytes V-2 (little endian), a byte for T, a byte for
# the train.bin share (in 256ths of the rest), then the uint16 tokens of both files
tokens() { le16 "$1"; printf "\\x$(printf %02x "$2")\\x$(printf %02x "$3")"; bytes "$4" "$5"; }
tokens 254 3 200 80 1 >"$C/tokens/v256"
tokens 65534 4 128 64 2 >"$C/tokens/v65536"
tokens 0 2 200 40 3 >"$C/tokens/v2_bad_tokens"
tokens 254 3 200 81 4 >"$C/tokens/odd_bytes"
tokens 254 30 250 20 5 >"$C/tokens/too_short"

# ---- safetensors in nanoGPT's layout: a byte for the config JSON's length L, L
# bytes of config, then the file. st NAME DTYPE META CONFIG name:shape:count ...
# (into $C/$ST_DIR/, safetensors/ unless ST_DIR is set)
le64() { local v=$1 i; for ((i = 0; i < 8; i++)); do printf "\\x$(printf %02x $(((v >> (8 * i)) & 255)))"; done; }
st() {
  local name=$1 dt=$2 meta=$3 cfg=$4 w=4 at=0 h="{" sep="" e n shp cnt; shift 4
  [ "$dt" = F64 ] && w=8; [ "$dt" = F16 ] || [ "$dt" = BF16 ] && w=2
  [ -n "$meta" ] && { h="{\"__metadata__\":{$meta}"; sep=","; }
  for e in "$@"; do
    n=${e%%:*}; shp=${e#*:}; cnt=${shp#*:}; shp=${shp%%:*}
    h="$h$sep\"$n\":{\"dtype\":\"$dt\",\"shape\":[$shp],\"data_offsets\":[$at,$((at + cnt * w))]}"
    sep=","; at=$((at + cnt * w))
  done
  h="$h}"
  { printf "\\x$(printf %02x ${#cfg})%s" "$cfg"; le64 ${#h}; printf '%s' "$h"; bytes "$at" 7; } >"$C/${ST_DIR:-safetensors}/$name"
}
L=transformer.h.0
TINY=(transformer.wte.weight:2,1:2 transformer.wpe.weight:1,1:1 $L.ln_1.weight:1:1 $L.attn.c_attn.weight:3,1:3
      $L.attn.c_proj.weight:1,1:1 $L.ln_2.weight:1:1 $L.mlp.c_fc.weight:1,1:1 $L.mlp.c_proj.weight:1,1:1
      transformer.ln_f.weight:1:1)
st tied_f32 F32 '"n_head":"1"' '' "${TINY[@]}"
st tied_bf16_config BF16 '' '{"n_head": 1, "n_embd": 1, "dropout": 0}' "${TINY[@]}"
st untied_f64 F64 '"n_head":"1","tied":"false"' '' "${TINY[@]}" lm_head.weight:2,1:2
st untied_f16 F16 '"n_head":"1"' '' lm_head.weight:2,1:2 "${TINY[@]}" $L.attn.bias:1,1,1,1:1
st bias_f32 F32 '"n_head":"1"' '' "${TINY[@]}" $L.ln_1.bias:1:1 $L.attn.c_attn.bias:3:3 $L.attn.c_proj.bias:1:1 \
  $L.ln_2.bias:1:1 $L.mlp.c_fc.bias:1:1 $L.mlp.c_proj.bias:1:1 transformer.ln_f.bias:1:1
st no_head F32 '' '' "${TINY[@]}"
st dropout F32 '"n_head":"1"' '{"dropout": 0.1}' "${TINY[@]}"
st llama F32 '"n_head":"1"' '' model.layers.0.self_attn.q_proj.weight:1,1:1
st wrong_shape F32 '"n_head":"1"' '' "${TINY[@]/3,1:3/1,3:3}"
st int64 I64 '' '' a:2:2

# ---- Hugging Face's Llama layout (the same input: config.json's length, config.json, the file)
M=model.layers.0
LL=(model.embed_tokens.weight:2,2:4 $M.input_layernorm.weight:2:2 $M.self_attn.q_proj.weight:2,2:4
    $M.self_attn.k_proj.weight:2,2:4 $M.self_attn.v_proj.weight:2,2:4 $M.self_attn.o_proj.weight:2,2:4
    $M.post_attention_layernorm.weight:2:2 $M.mlp.gate_proj.weight:1,2:2 $M.mlp.up_proj.weight:1,2:2
    $M.mlp.down_proj.weight:2,1:2 model.norm.weight:2:2)
H1='{"num_attention_heads":1}'
ST_DIR=llama_hf st untied_f32 F32 '"format":"pt"' "$H1" "${LL[@]}" lm_head.weight:2,2:4
ST_DIR=llama_hf st tied_bf16 BF16 '' '{"num_attention_heads":1,"tie_word_embeddings":true}' "${LL[@]}"
GQA=("${LL[@]/$M.self_attn.q_proj.weight:2,2:4/$M.self_attn.q_proj.weight:4,2:8}")  # 2 heads of 2, 1 kv head
GQA=("${GQA[@]/$M.self_attn.o_proj.weight:2,2:4/$M.self_attn.o_proj.weight:2,4:8}")
ST_DIR=llama_hf st gqa_f16 F16 '' '{"num_attention_heads":2,"num_key_value_heads":1,"head_dim":2}' \
  "${GQA[@]}" lm_head.weight:2,2:4
ST_DIR=llama_hf st rope_scaling F32 '' '{"num_attention_heads":1,"rope_scaling":{"type":"linear","factor":2}}' \
  "${LL[@]}" lm_head.weight:2,2:4
ST_DIR=llama_hf st bias F64 '' "$H1" "${LL[@]}" lm_head.weight:2,2:4 $M.self_attn.q_proj.bias:2:2
ST_DIR=llama_hf st inv_freq F64 '' "$H1" "${LL[@]}" lm_head.weight:2,2:4 $M.self_attn.rotary_emb.inv_freq:1:1
ST_DIR=llama_hf st no_head F32 '' "$H1" "${LL[@]}"

# ---- Hugging Face's GPT-2 layouts (the same input: config.json's length, config.json, the file):
# C 2, one head, M 1, n_positions 1, V 2; Conv1D weights [in, out]
G=transformer.h.0
GP=(transformer.wte.weight:2,2:4 transformer.wpe.weight:1,2:2 $G.ln_1.weight:2:2 $G.ln_1.bias:2:2
    $G.attn.c_attn.weight:2,6:12 $G.attn.c_attn.bias:6:6 $G.attn.c_proj.weight:2,2:4 $G.attn.c_proj.bias:2:2
    $G.ln_2.weight:2:2 $G.ln_2.bias:2:2 $G.mlp.c_fc.weight:2,1:2 $G.mlp.c_fc.bias:1:1 $G.mlp.c_proj.weight:1,2:2
    $G.mlp.c_proj.bias:2:2 transformer.ln_f.weight:2:2 transformer.ln_f.bias:2:2)
G1='{"n_head":1,"n_inner":1}'
ST_DIR=gpt2_hf st tied_f32 F32 '"format":"pt"' "$G1" "${GP[@]}"
ST_DIR=gpt2_hf st untied_bf16 BF16 '' '{"n_head":1,"n_inner":1,"tie_word_embeddings":false}' "${GP[@]}" \
  lm_head.weight:2,2:4
ST_DIR=gpt2_hf st gpt2model_buffers F64 '' '{"n_head":1,"n_inner":1,"activation_function":"gelu"}' \
  "${GP[@]//transformer./}" h.0.attn.bias:1,1,1,1:1 h.0.attn.masked_bias::1
ST_DIR=gpt2_hf st inverse_layer_idx F32 '' '{"n_head":1,"n_inner":1,"scale_attn_by_inverse_layer_idx":true}' \
  "${GP[@]}"
ST_DIR=gpt2_hf st nanogpt_shape F32 '' "$G1" "${GP[@]/2,6:12/6,2:12}"
echo "seeds: $(find "$C" -type f | wc -l) files in $C"
