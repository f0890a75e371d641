"""The layering picture of docs/design.md is the import contract of pyproject.toml."""

from __future__ import annotations

import re
import tomllib

from tests.docs.markdown import ROOT, fenced_blocks


def contract_layers() -> list[set[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return [{name.strip().removeprefix("routecli.") for name in layer.split("|")}
            for layer in contract["layers"]]


def pictured_layers() -> list[set[str]]:
    text = (ROOT / "docs" / "design.md").read_text().split("## Layers and the import contract")[1]
    _, _, picture = fenced_blocks(text)[0]
    layers = []
    for line in picture:
        names = re.sub(r"\(.*\)", "", line).replace("└─", "").replace("solvers.py", "solvers")
        layers.append({name.strip() for name in names.split("|")})
    return layers


def test_design_picture_is_the_import_contract():
    assert pictured_layers() == contract_layers()
