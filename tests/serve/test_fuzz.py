"""Schemathesis against the app's own OpenAPI schema, in process (ASGI, no socket, no network):
generated requests, valid and invalid, never get a server error or an answer the schema does
not declare."""
import tempfile
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (content_type_conformance, negative_data_rejection,
                                               response_schema_conformance,
                                               status_code_conformance)

from tiny_checkpoint import write_checkpoint
from tiny_panel import make_tiny_panel

pytestmark = pytest.mark.slow  # fuzzing

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance, negative_data_rejection]


def tiny_app():
    """The app around an untrained checkpoint and the tiny ADMET panel beside it, every
    endpoint shown (read into memory, then their files deleted)."""
    from graphnorm.inference.admet_panel import AdmetPanel
    from graphnorm.inference.predict import load_predictor
    from graphnorm.serve.app import create_app
    from graphnorm.serve.limits import Limits
    from graphnorm.serve.panel_service import PanelService
    from graphnorm.serve.service import PredictionService

    with tempfile.TemporaryDirectory() as tmp:
        predictor = load_predictor(write_checkpoint(Path(tmp) / "best.ckpt"))
        panel = AdmetPanel.load(make_tiny_panel(Path(tmp))[0], all_endpoints=True)
    # small limits: generated lists stay cheap, and the 413 answers are reachable
    limits = Limits(max_smiles=20, max_drawn=2, max_atoms=20, max_upload_bytes=64 * 1024)
    service = PredictionService(predictor, limits)
    return create_app(service, PanelService(panel, limits, scheduler=service.scheduler))


# loaded at import: schemathesis 4.32's fixture-based loader does not run under pytest 9
schema = schemathesis.openapi.from_asgi("/openapi.json", tiny_app())
schema.config.generation.update(max_examples=60, deterministic=True)  # ~5 s of calls


@schema.parametrize()
@settings(deadline=None, suppress_health_check=list(HealthCheck))
def test_api_never_fails_and_keeps_its_schema(case):
    case.call_and_validate(checks=CHECKS)
