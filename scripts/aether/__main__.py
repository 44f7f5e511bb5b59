from aether.cli import main

main()
