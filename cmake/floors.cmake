# The floors (router/floors.txt; its header says the format): each folder of the router and its
# libraries, the library its files are built into, and the folders it uses. The same file is
# what scripts/check-floors.py holds the includes to.
#
#   santral_floor_links(<library>)
#
# links <library> (PUBLIC: its headers include theirs) to the libraries of the folders its
# folder uses, and to nothing else of Santral's: a library links what it uses, and loses the
# link when the file says it no longer does. Other dependencies (Boost, fmt, OpenSSL ...) are
# the caller's.
include_guard(GLOBAL)

set(SANTRAL_FLOORS_FILE ${PROJECT_SOURCE_DIR}/router/floors.txt)
# Editing the file configures again.
set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${SANTRAL_FLOORS_FILE})

# Reads the file once into global properties: santral_floor_library_<folder>,
# santral_floor_folder_<library> and santral_floor_uses_<folder>.
function(santral_floors_read)
  file(STRINGS ${SANTRAL_FLOORS_FILE} lines)
  set(folder "")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "#.*" "" line "${line}")
    string(REGEX MATCHALL "[^ \t]+" words "${line}")
    if(NOT words)
      continue()
    endif()
    if(line MATCHES "^[^ \t]")
      list(LENGTH words count)
      if(NOT count EQUAL 2)
        message(FATAL_ERROR "${SANTRAL_FLOORS_FILE}: '${line}': a folder and its library, no more")
      endif()
      list(GET words 0 folder)
      list(GET words 1 library)
      get_property(taken GLOBAL PROPERTY santral_floor_folder_${library})
      if(taken)
        message(FATAL_ERROR "${SANTRAL_FLOORS_FILE}: ${library} is both ${taken}'s and ${folder}'s")
      endif()
      set_property(GLOBAL PROPERTY santral_floor_library_${folder} ${library})
      set_property(GLOBAL PROPERTY santral_floor_folder_${library} ${folder})
      set_property(GLOBAL PROPERTY santral_floor_uses_${folder} "")
    elseif(folder STREQUAL "")
      message(FATAL_ERROR "${SANTRAL_FLOORS_FILE}: '${line}': a use before any folder")
    else()
      set_property(GLOBAL APPEND PROPERTY santral_floor_uses_${folder} ${words})
    endif()
  endforeach()
endfunction()
santral_floors_read()

function(santral_floor_links library)
  get_property(folder GLOBAL PROPERTY santral_floor_folder_${library})
  if(NOT folder)
    message(FATAL_ERROR "${library} is no folder's library in ${SANTRAL_FLOORS_FILE}")
  endif()
  get_property(uses GLOBAL PROPERTY santral_floor_uses_${folder})
  set(links "")
  foreach(used IN LISTS uses)
    get_property(used_library GLOBAL PROPERTY santral_floor_library_${used})
    if(NOT used_library)
      message(FATAL_ERROR "${SANTRAL_FLOORS_FILE}: ${folder} uses ${used}, which is not listed")
    endif()
    list(APPEND links ${used_library})
  endforeach()
  target_link_libraries(${library} PUBLIC ${links})
endfunction()
