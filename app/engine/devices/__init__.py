"""Facts about disks and block devices (no policy): listing, Linux device numbers, disk stats."""
