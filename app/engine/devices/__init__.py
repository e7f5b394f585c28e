"""Facts about disks, block devices and the host (no policy): listing, Linux device numbers, disk stats, what
a report says about where a run was measured (environment)."""
