# Installation and the CMake package (filled in by the library work).
