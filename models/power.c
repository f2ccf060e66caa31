/* SPDX-License-Identifier: Apache-2.0
 * power: the core clock a board power limit allows (see power.h). */
#include "models/power.h"

#include <math.h>

int power_clock_fraction(double limit_w, double tdp_w, const char *what, double *k,
			 struct diag *d)
{
	*k = 1;
	if (!(limit_w > 0))
		return 0;
	if (!isfinite(limit_w))
		return diag_set(d, DIAG_EINPUT, "power limit %g W: expected a finite number of "
				"watts", limit_w);
	if (!(tdp_w > 0))
		return diag_set(d, DIAG_EINPUT, "power limit %g W on %s: the catalogue gives no "
				"rated board power (tdp_w) to scale its clocks from", limit_w, what);
	if (limit_w >= tdp_w)
		return 0;
	double fixed = POWER_FIXED_SHARE * tdp_w;
	if (limit_w <= fixed)
		return diag_set(d, DIAG_EINPUT, "power limit %g W on %s: expected more than %g W "
				"(the %.0f%% of its rated %g W that does not follow the core clock)",
				limit_w, what, fixed, 100 * POWER_FIXED_SHARE, tdp_w);
	*k = cbrt((limit_w - fixed) / (tdp_w - fixed));
	return 0;
}
