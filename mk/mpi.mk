# make verdicts over MPI ranks (docs/cluster.md).
#   make verdict-tasks   writes $(VTASKS): the per-seed runs of make verdicts that
#                        are missing or older than their program, one shell command
#                        per line (the same command make verdicts runs), for
#                        run_tasks; builds the programs (default build, SAN=0
#                        whatever the caller's) first.
#                        The same run list as make verdicts (VERDICT_RUN_EXPS:
#                        VERDICT_SKIP="a b" leaves a and b out).
#   make verdicts-mpi NP=4 [MPIRUN="srun"]
#                        verdict-tasks, then $(MPIRUN) build-mpi/bin/run_tasks on
#                        the list (the runs spread over the ranks, each once), then
#                        the judge (verdicts-only) on the runs: the same files as
#                        make verdicts, byte for byte (each run is deterministic).
VTASKS := $(RES)/verdict-tasks.txt
NP ?= 2
MPIRUN ?= mpirun $(if $(filter 0,$(shell id -u)),--allow-run-as-root) -np $(NP)


.PHONY: verdict-tasks verdicts-mpi
verdict-tasks:
	@$(MAKE) --no-print-directory MPI=0 SAN=0 $(addprefix build/bin/,$(VERDICT_RUN_EXPS))
	@mkdir -p $(RES)
	@{ $(foreach e,$(VERDICT_RUN_EXPS),$(foreach s,$(VERDICT_SEEDS),\
	  if [ build/bin/$(e) -nt $(VRUNS)/$(e)/seed$(s)/run.txt ]; then \
	    echo 'mkdir -p $(VRUNS)/$(e)/seed$(s) && OPENBLAS_NUM_THREADS=1 build/bin/$(e) $(call verdict_flags,$(e),$(s)) --out $(VRUNS)/$(e)/seed$(s) --quiet'; \
	  fi;)) } >$(VTASKS).tmp && mv $(VTASKS).tmp $(VTASKS)
	@echo "verdict-tasks: $$(wc -l <$(VTASKS)) runs to do in $(VTASKS)"

verdicts-mpi: deps
	@$(MAKE) --no-print-directory MPI=0 verdict-tasks
	@$(MAKE) --no-print-directory MPI=1 build-mpi/bin/run_tasks
	@if [ -s $(VTASKS) ]; then $(MPIRUN) build-mpi/bin/run_tasks --quiet $(VTASKS); fi
	@$(MAKE) --no-print-directory MPI=0 verdicts-only
