"""Run the harness inside a container image: `harness launch`, `harness reproduce`, `make image|bench|push`.

The host side only needs the Docker engine and the `docker` SDK; torch and the device stack live in the image.
"""
