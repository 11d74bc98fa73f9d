"""ImageDistributionValidator: TFX's DistributionValidator on the newest and the previous span."""
