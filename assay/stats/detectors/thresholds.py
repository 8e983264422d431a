"""Thresholds shared by the detector families."""

MIN_SEGMENT_N = 30
MIN_BEHAVIOUR_ROWS = 5000  # below this a table is a catalogue (products, channels), not behaviour
MIN_REL_GAP = 0.25
CHANGE_MIN_REL = 0.30
MATERIAL_REL = 0.10         # a relation's fitted effect along the observed range, relative to the mean
NO_EFFECT_P = 0.2          # reported as "uniform" only when the test is far from significant
