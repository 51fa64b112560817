# make test-torch: the toolkit's Transformers against PyTorch. tests/torch_nanogpt.py:
# nanoGPT's layout (loss, gradient and H v to 1e-10 on text tokens, tied and untied,
# biases on and off; toolkit checkpoints loaded into PyTorch; the same bytes written
# back). tests/torch_llama.py: the Llama-style model in Hugging Face's layout (MHA,
# GQA, one kv head, tied and untied; F64, F32, F16, BF16; the interleaved rotary and a
# wrong RMSNorm eps told apart; toolkit checkpoints loaded into PyTorch). Installs
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
