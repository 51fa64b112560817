# make test-torch: the toolkit's Transformer against PyTorch in nanoGPT's layout
# (tests/torch_nanogpt.py: loss, gradient and H v to 1e-10 on text tokens, tied
# and untied, biases on and off; toolkit checkpoints loaded into PyTorch; the
# same bytes written back). Installs Debian's python3-torch and python3-numpy
# first: only this target needs them.
TORCH_DEB_PACKAGES := python3-torch python3-numpy
# Debian's own interpreter: the one its python3-* packages install into
TORCH_PYTHON ?= /usr/bin/python3
.PHONY: test-torch
test-torch: deps
	@./scripts/deps.sh $(TORCH_DEB_PACKAGES)
	@$(MAKE) --no-print-directory $(BUILD)/bin/tt_probe $(BUILD)/bin/train_transformer
	@$(TORCH_PYTHON) tests/torch_nanogpt.py $(BUILD)
