"""Plan editing: the plan document and the Topology, Disk Targets, Access Specifications and Test Setup tabs."""
