"""What fio opens, armed or refused; our own folders and processes."""
