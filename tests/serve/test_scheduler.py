"""Large requests share the model slice by slice and do not hold small ones behind them."""
import threading

import pytest

from graphnorm.serve.scheduler import SliceScheduler


def test_fewest_slices_served_go_first():
    scheduler, order = SliceScheduler(), []
    gate = threading.Event()

    def hold_first_turn():
        with scheduler.turn(0):
            gate.wait(10)

    def take_turn(name, served):
        with scheduler.turn(served):
            order.append(name)

    holder = threading.Thread(target=hold_first_turn)
    holder.start()
    waiters = []
    for name, served in [("large, 5 served", 5), ("large, 2 served", 2), ("new, 0 served", 0),
                         ("other new", 0)]:
        waiters.append(threading.Thread(target=take_turn, args=(name, served)))
        waiters[-1].start()
        while scheduler.waiting < len(waiters):  # queued in this order
            threading.Event().wait(0.005)
    gate.set()
    for t in [holder, *waiters]:
        t.join(10)
    assert order == ["new, 0 served", "other new", "large, 2 served", "large, 5 served"]
    with scheduler.turn(0):  # free again: taken at once
        assert scheduler.waiting == 0


def test_a_small_request_runs_after_one_slice_of_a_large_one(tmp_path):
    """The 1-row request arrives while a 10-slice request holds its first slice: it runs next,
    not after the other nine (the slices are recorded in the order they ran)."""
    from graphnorm.inference.predict import load_predictor
    from graphnorm.serve.service import PredictionService
    from tiny_checkpoint import write_checkpoint

    predictor = load_predictor(write_checkpoint(tmp_path / "best.ckpt"))
    service = PredictionService(predictor, slice_rows=10)
    ran, first_slice_started, small_queued = [], threading.Event(), threading.Event()
    predict = predictor.predict

    def recorded_predict(smiles, labels=None, errors=None):
        ran.append(len(smiles))
        if len(ran) == 1:  # the large request's first slice: let the small one queue
            first_slice_started.set()
            assert small_queued.wait(10)
        return predict(smiles, labels, errors)

    predictor.predict = recorded_predict
    large = threading.Thread(target=service.predict, args=(["CCO"] * 100,))
    large.start()
    assert first_slice_started.wait(10)
    small = threading.Thread(target=lambda: small_out.append(service.predict(["c1ccccc1O"])))
    small_out = []
    small.start()
    while service.scheduler.waiting < 1:
        threading.Event().wait(0.005)
    small_queued.set()
    large.join(30)
    small.join(30)
    assert ran[:3] == [10, 1, 10] and len(ran) == 11
    assert small_out[0]["rows"][0]["error"] is None


def test_slices_must_hold_a_molecule(tmp_path):
    from graphnorm.inference.predict import load_predictor
    from graphnorm.serve.service import PredictionService
    from tiny_checkpoint import write_checkpoint

    predictor = load_predictor(write_checkpoint(tmp_path / "best.ckpt"))
    with pytest.raises(ValueError, match="at least one molecule"):
        PredictionService(predictor, slice_rows=0)
