// Compiled with a group's precompiled header (cmake/precompiled_headers.cmake), which is what
// its target is for; it holds nothing itself.
