"""ImageDistributionValidator: TFX's DistributionValidator on the newest and the previous span."""

# What other stages may import: the drift verdict, its sentences and its gate.
PUBLIC_MODULES = ("verdict",)
