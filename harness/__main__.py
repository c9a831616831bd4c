from harness import bytecode

bytecode.keep()  # before the CLI's own imports: they are kept too

from harness.cli import cli  # noqa: E402

if __name__ == "__main__":
    cli()
