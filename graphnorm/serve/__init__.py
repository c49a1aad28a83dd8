"""``graphnorm serve``: a web page and JSON API for predictions (docs/explain_and_serve.md).

FastAPI + uvicorn: one small dependency set gives the JSON API (request validation, 422/413
answers) and the page in one app, and tests run it over real HTTP. Submodules load on use.
"""
