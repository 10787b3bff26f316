// Boost.URL compiled once for the whole program (header-only use would need BOOST_URL_NO_LIB
// in every unit; Debian ships no libboost_url): the admin listener's query strings.
#include <boost/url/src.hpp>
