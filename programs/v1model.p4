// Bundled <v1model.p4>: written in this project (see compiler docs).
