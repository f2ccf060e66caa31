/* SPDX-License-Identifier: Apache-2.0
 * power: the core clock a board power limit allows.
 *
 * A GPU's rated peaks hold at its rated board power (the catalogue's
 * tdp_w).  Under a lower limit (a Max-Q or laptop part run below its rated
 * power, a data-centre card configured down, `nvidia-smi -pl`) the firmware
 * lowers the core clock until the board stays inside it.  Board power is a
 * part that does not follow the core clock (leakage, the memory subsystem,
 * the board itself: POWER_FIXED_SHARE of the rated power) and the cores'
 * dynamic power, C V^2 f with the voltage scaled along with the clock over
 * the DVFS range, so ~ f^3:
 *
 *   P(k) = s P_tdp + (1 - s) P_tdp k^3       k = f / f_rated
 *   k(P) = ((P - s P_tdp) / ((1 - s) P_tdp))^(1/3)
 *
 * Compute throughput follows k; memory bandwidth does not (the memory clock
 * is its own, and a bandwidth-bound decode keeps it saturated at lower core
 * clocks).  Below ~60% of the rated power the cores reach their minimum
 * voltage and further cuts cost clock one for one, faster than k(P): the
 * relation is optimistic there (docs/performance-model.md, "Power caps").
 */
#ifndef MODELS_POWER_H
#define MODELS_POWER_H

#include "base/diag.h"

/* Share of the rated board power that does not scale with the core clock. */
#define POWER_FIXED_SHARE 0.3

/* The clock fraction k in (0, 1] at limit_w on a board rated tdp_w: 1 when
 * limit_w <= 0 (no limit) or limit_w >= tdp_w.  DIAG_EINPUT (the message
 * names `what`, e.g. the hardware id) when there is a limit but no rated
 * power, or the limit is at or below the fixed share. */
int power_clock_fraction(double limit_w, double tdp_w, const char *what, double *k,
			 struct diag *d);

#endif
