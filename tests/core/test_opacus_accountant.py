"""privkit as opacus's accountant."""

import warnings

import pytest

from privkit import PLDAccountant
from privkit.opacus_accountant import PrivkitAccountant, noise_multiplier_for


def test_history_merges_identical_steps_and_reports_pld():
    """Steps are merged like opacus's accountants; epsilon is the PLD bound of the plan."""
    acct = PrivkitAccountant()
    for _ in range(20):
        acct.step(noise_multiplier=1.1, sample_rate=0.02)
    acct.step(noise_multiplier=2.0, sample_rate=0.02)
    assert acct.history == [(1.1, 0.02, 20), (2.0, 0.02, 1)]
    assert len(acct) == 21
    assert acct.get_epsilon(1e-5) == PLDAccountant().epsilon(acct.plan(), delta=1e-5)
    assert PrivkitAccountant().get_epsilon(1e-5) == 0.0


def test_trains_with_opacus_privacy_engine():
    """A real DP-SGD run with opacus records its steps in privkit's accountant, and the
    reported epsilon is at most opacus's own RDP figure for the same history."""
    import torch
    from opacus import PrivacyEngine
    from opacus.accountants import RDPAccountant

    torch.manual_seed(0)
    x = torch.randn(256, 4)
    y = (x[:, 0] > 0).long()
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=32)
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        engine = PrivacyEngine()
        engine.accountant = PrivkitAccountant()
        model, optimizer, loader = engine.make_private(
            module=model, optimizer=optimizer, data_loader=loader,
            noise_multiplier=1.0, max_grad_norm=1.0)
        for xb, yb in loader:
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(xb), yb).backward()
            optimizer.step()
    assert len(engine.accountant) == len(loader)
    rdp = RDPAccountant()
    rdp.history = list(engine.accountant.history)
    assert 0 < engine.get_epsilon(1e-5) < rdp.get_epsilon(1e-5)


def test_noise_multiplier_calibration_round_trips():
    """The calibrated noise multiplier meets the target and 1% less does not."""
    from privkit.opacus_accountant import _step_plan

    sigma = noise_multiplier_for(epsilon=2.0, delta=1e-5, sampling_rate=0.02, steps=200)
    assert PLDAccountant().epsilon(_step_plan(sigma, 0.02, 200), delta=1e-5) <= 2.0
    assert PLDAccountant().epsilon(_step_plan(0.99 * sigma, 0.02, 200), delta=1e-5) > 2.0


def test_bad_arguments():
    """Invalid accountants and steps are refused clearly."""
    with pytest.raises(ValueError, match="`accountant` must be a privkit Accountant"):
        PrivkitAccountant("rdp")
    with pytest.raises(ValueError, match="`sample_rate` must be in"):
        PrivkitAccountant().step(noise_multiplier=1.0, sample_rate=0.0)
    assert isinstance(PrivkitAccountant("tightest").accountant, str)
