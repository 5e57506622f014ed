from test_tui_screens import *  # noqa

async def test_dbg(fresh) -> None:
    cfg, ledger = fresh
    app = DreamApp(cfg, ledger, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        print("A", app.focused, app.screen, app.current_mode)
        await pilot.press("7")
        await pilot.pause(0.3)
        print("B", app.focused, app.screen, app.current_mode, [n.message for n in app._notifications])
        assert 0
