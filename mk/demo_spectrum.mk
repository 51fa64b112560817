# Foundation demo: program -> results/ -> gnuplot -> PNG.
$(RES)/demo_spectrum/run.txt: $(BUILD)/bin/demo_spectrum
	$< --out $(@D) --quiet
$(FIG)/demo_spectrum.png: $(RES)/demo_spectrum/run.txt plots/demo_spectrum.gp
	$(call render,plots/demo_spectrum.gp,res='$(RES)/demo_spectrum')
FIGURES += $(FIG)/demo_spectrum.png
