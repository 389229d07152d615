// The GatewaySQLite module. See ../shared/DESIGN.md for where it sits among Orchard's layers.
