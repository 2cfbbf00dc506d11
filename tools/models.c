// SPDX-License-Identifier: MIT
/*
 * models.c - the models `iotap run` knows, from the one table (iotap_models.h)
 */
#include <stddef.h>

#include "iotap_models.h"
#include "run.h"

#define MODEL_ROW(name) &name##_model,
const struct run_model *const run_models[] = {
	IOTAP_MODELS(MODEL_ROW, MODEL_ROW)
	NULL
};
