"""What the components share: storage, the contract, parameters, versions, the TFX adapter."""
