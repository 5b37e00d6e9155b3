"""The files of a check and keeping them honest: which files are the check, their protection, files outside the project, files hidden from git."""
