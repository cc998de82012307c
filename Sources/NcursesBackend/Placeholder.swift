// NcursesBackend
