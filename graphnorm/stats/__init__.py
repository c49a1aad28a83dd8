"""Statistics over predictions and labels, below every package that scores models:
`bootstrap` (metrics and the paired bootstrap of their difference, with its verdict) and
`calibration` (split-conformal intervals, probability calibration, ECE)."""
