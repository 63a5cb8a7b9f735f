# Gallatin (Hunter McCoy and Prashant Pandey, PPoPP'24): header-only, BSD-3.
# docs/zoo.md lists what its adapters measure and how they differ from the contract.
hb_zoo_fetch(gallatin
  GIT_REPOSITORY https://github.com/saltsystemslab/gallatin.git
  GIT_TAG 1aa70ade136c3c2042e2a9c2f25565aa56168a0f
  INCLUDE_DIRS include)
