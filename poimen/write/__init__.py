"""The write side: the gated loop, its gate parser, the runner, progress, symptom projections, reference docs."""
