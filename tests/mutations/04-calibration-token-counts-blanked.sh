# Mutation: the calibration set's output_throughput_tok_s rows lose their token counts
# Tests: test_validate
#
# Each such row then becomes "skipped" and leaves the check.  The set's content
# and per-metric predicted/skipped counts are pinned (test_validate:
# CALIBRATION_PIN), so a data edit like this must come with an updated pin.
sed -i -E 's/,[0-9]*,[0-9]*,output_throughput_tok_s,/,,,output_throughput_tok_s,/' \
  models/calibration/measurements.csv
