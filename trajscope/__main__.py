from trajscope.cli import main

main()
