/* spectra_util — spectra's per-type sample of blocks (spectra_util.c). */
#ifndef SPECTRA_UTIL_H
#define SPECTRA_UTIL_H

#include "core/model.h"

/* At most max_per_type blocks of each type (evenly spaced in p's order: the
 * first, the last and those between; all when max_per_type = 0): a new
 * partition of them (not covering), their indices in p into *kept (malloc'ed). */
partition *partition_sample_types(const partition *p, const int *type, int max_per_type, int **kept);

#endif
