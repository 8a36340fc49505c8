"""Vocabulary of the built-in apps: brands, models, shops, places and their display formats.

Written for DIBench (no list is copied from elsewhere). Each module holds the words of one app
family; ``common`` holds the number/time formats and sampling helpers every app shares, so that
'2.3k sold' and '已售2300+' mean the same thing on every screen.
"""
