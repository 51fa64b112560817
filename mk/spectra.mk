# Per-block spectra past exact (tools/spectra, experiments/spectra_check; docs/spectra.md).
# make spectra (in make figures): SLQ and the exact block spectra of the tiny Transformer at
# 1% of training (H on 64 sequences), Algorithm 3 blocks, at spectra's defaults (m, n_v), side
# by side. make spectra-check: SLQ and Lanczos against the exact spectra over m and n_v, both
# models, three checkpoints, three partitions (minutes). make spectra-big: the Transformer at
# P = 1.06M (8 layers, C 128, M 256), SLQ of every Algorithm 3 head block, 32 blocks of every
# other Algorithm 3 type and every tensor, next to the exact small one (tens of minutes;
# wall time and memory from /usr/bin/time -v into $(RES)/spectra_big/time_*.txt).
NON_TT_EXPS += spectra
SPECTRA_FLAGS := --hess-batch 64 --quiet
$(RES)/spectra/exact/run.txt: $(BUILD)/bin/spectra
	$< --method exact $(SPECTRA_FLAGS) --out $(@D)
$(RES)/spectra/slq/run.txt: $(BUILD)/bin/spectra
	$< $(SPECTRA_FLAGS) --out $(@D)
$(FIG)/spectra.png: $(RES)/spectra/exact/run.txt $(RES)/spectra/slq/run.txt plots/spectra.gp
	$(call render,plots/spectra.gp,exact='$(RES)/spectra/exact'; slq='$(RES)/spectra/slq')
FIGURES += $(FIG)/spectra.png
.PHONY: spectra spectra-check spectra-big
spectra: $(FIG)/spectra.png

$(RES)/spectra_check/run.txt: $(BUILD)/bin/spectra_check
	set -o pipefail; $< --out $(@D) --m 5,10,20,40,80 --nv 1,2,4,8 --quiet | tee $(@D)-headline.tmp || \
	  { rm -f $(@D)-headline.tmp; exit 1; }; mv $(@D)-headline.tmp $(@D)/headline.txt
$(FIG)/spectra_check.png: $(RES)/spectra_check/run.txt plots/spectra_check.gp
	$(call render,plots/spectra_check.gp,res='$(RES)/spectra_check')
spectra-check: $(FIG)/spectra_check.png
	@cat $(RES)/spectra_check/headline.txt

SPECTRA_BIG := --layers 8 --C 128 --M 256 --heads 4 --steps 100 --checkpoint 0.1 --hess-batch 4 --quiet
$(RES)/spectra_big/alg3/run.txt: $(BUILD)/bin/spectra
	@./scripts/deps.sh time
	@mkdir -p $(RES)/spectra_big
	/usr/bin/time -v -o $(RES)/spectra_big/time_alg3.txt $< $(SPECTRA_BIG) --partition alg3 --max-per-type 32 --out $(@D)
$(RES)/spectra_big/alg2/run.txt: $(BUILD)/bin/spectra
	@./scripts/deps.sh time
	@mkdir -p $(RES)/spectra_big
	/usr/bin/time -v -o $(RES)/spectra_big/time_alg2.txt $< $(SPECTRA_BIG) --partition alg2 --out $(@D)
$(FIG)/spectra_big.png: $(RES)/spectra_big/alg3/run.txt $(RES)/spectra_big/alg2/run.txt $(RES)/spectra/exact/run.txt plots/spectra_big.gp
	$(call render,plots/spectra_big.gp,small='$(RES)/spectra/exact'; big='$(RES)/spectra_big/alg3'; tensors='$(RES)/spectra_big/alg2')
spectra-big: $(FIG)/spectra_big.png
	@for p in alg3 alg2; do grep -E 'Elapsed|Maximum resident' $(RES)/spectra_big/time_$$p.txt | sed "s/^/$$p: /"; done
