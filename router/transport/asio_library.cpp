// Asio compiled once for the whole program: with BOOST_ASIO_SEPARATE_COMPILATION (set for every
// translation unit in CMakeLists.txt) Asio's headers only declare its non-template functions,
// and their bodies, and those of its SSL layer, are compiled here.
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
