"""A plan's steps and the fio job text for them: sequence, job files, targets, placement."""
