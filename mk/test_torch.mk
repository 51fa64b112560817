# make test-torch: the toolkit's Transformers against PyTorch. tests/torch_nanogpt.py:
# nanoGPT's layout (loss, gradient and H v to 1e-10 on text tokens, tied and untied,
# biases on and off; toolkit checkpoints loaded into PyTorch; the same bytes written
# back). tests/torch_llama.py: the Llama-style model in Hugging Face's layout (MHA,
# GQA, one kv head, tied and untied; F64, F32, F16, BF16; the interleaved rotary and a
# wrong RMSNorm eps told apart; toolkit checkpoints loaded into PyTorch). tests/torch_gpt2.py:
# GPT-2 in Hugging Face's two name layouts (Conv1D, gelu_new, tied and untied; F32, BF16;
# the erf GELU and a skipped Conv1D transpose told apart; toolkit folders loaded into
# PyTorch and written again to the same bytes). Installs
# Debian's python3-torch and python3-numpy first: only this target needs them.
TORCH_DEB_PACKAGES := python3-torch python3-numpy
# Debian's own interpreter: the one its python3-* packages install into
TORCH_PYTHON ?= /usr/bin/python3
.PHONY: test-torch
test-torch: deps
	@./scripts/deps.sh $(TORCH_DEB_PACKAGES)
	@$(MAKE) --no-print-directory $(BUILD)/bin/tt_probe $(BUILD)/bin/train_transformer $(BUILD)/bin/llama_probe
	@$(TORCH_PYTHON) tests/torch_nanogpt.py $(BUILD)
	@$(TORCH_PYTHON) tests/torch_llama.py $(BUILD)
	@$(TORCH_PYTHON) tests/torch_gpt2.py $(BUILD)
