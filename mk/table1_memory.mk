# Paper Table 1: optimizer memory from model shapes. No figure; a table and claims.
NON_TT_EXPS += table1_memory
$(RES)/table1_memory/run.txt: $(BUILD)/bin/table1_memory
	$< --out $(@D) --quiet
$(RES)/table1_memory/claims.txt: $(RES)/table1_memory/run.txt
CLAIMS += $(RES)/table1_memory/claims.txt
VERDICT_EXPS += table1_memory
VCMD_table1_memory :=
