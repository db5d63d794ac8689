def add_compare_options(p):
    p.add_argument("--compare", action="store_true")
