// Beast compiled once for the whole program (BOOST_BEAST_SEPARATE_COMPILATION, set for every
// translation unit in CMakeLists.txt): its HTTP parser and other non-template code, which the
// admin listener and the etcd client use.
#include <boost/beast/src.hpp>
