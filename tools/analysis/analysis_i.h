/* SPDX-License-Identifier: MIT */
/*
 * analysis_i.h - libiotap-analysis's private header: what its files share
 * with each other and not with the CLI (the public API is iotap_analysis.h,
 * which this includes). tests/unit/test_report.c, a white-box test, sees it
 * too.
 */
#ifndef IOTAP_ANALYSIS_I_H
#define IOTAP_ANALYSIS_I_H

#include "iotap_analysis.h"

#endif /* IOTAP_ANALYSIS_I_H */
