"""VitaBench ported onto the environment contract: delivery, instore, ota and their
cross-domain merge, one environment per task database."""
