// Bundled <core.p4>: written in this project (see compiler docs).
