/* SPDX-License-Identifier: MIT */
/*
 * iotap_models.h - the one table of workload models
 *
 * A row per model: M(NAME) for a model, A(NAME) for one whose traces have
 * application figures. `iotap run` and its --help iterate it (tools/
 * models.c: NAME_model, struct run_model, in workload/NAME/run_NAME.c),
 * and so do report, compare and HTML for the A rows (analysis/app.c:
 * app_NAME_ops, struct app_ops, in analysis/app_NAME.c). The order is
 * that of `iotap run --help`. A new model is a folder under workload/
 * (its meson.build adds it to the build) and a row here.
 */
#ifndef IOTAP_MODELS_H
#define IOTAP_MODELS_H

#define IOTAP_MODELS(M, A) \
	M(bonnie) \
	M(iozone) \
	M(dd) \
	M(hdparm) \
	A(dedup) \
	A(pgsql)

#endif /* IOTAP_MODELS_H */
