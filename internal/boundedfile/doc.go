// Package boundedfile reads the files a user names (definitions,
// templates, test files, recordings, calendars) the one safe way: only a
// regular file is read (a FIFO, a device such as /dev/zero, a socket or a
// directory is refused before a byte is read, and opening one never
// blocks), at most its limit plus one byte is read (a larger file is
// refused with a TooLargeError naming the limit), and the read stops when
// its context ends.
package boundedfile
