"""The web console at `/console` and the API docs at `/docs`, both served without a CDN.

The console is a small static app (HTML, vanilla JS, CSS in `static/`) over the public REST/SSE
API; nothing here reaches the runtime. `/docs` is FastAPI's Swagger UI with its assets served
from the `swagger-ui-bundle-v2` package, so it works on machines without internet access.
"""

from __future__ import annotations

from importlib.resources import files

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from swagger_ui_bundle import swagger_ui_path

CONSOLE_PATH = "/console"
DOCS_PATH = "/docs"
_DOCS_ASSETS = "/docs/assets"
_OAUTH2_REDIRECT = "/docs/oauth2-redirect"


def install_console(app: FastAPI) -> None:
    """Serve the console at `/console/` and Swagger UI at `/docs` from local files.

    Build `app` with `docs_url=None` and `redoc_url=None`: FastAPI's own pages load their
    scripts from a CDN.
    """
    static = files("serve.console") / "static"
    app.mount(CONSOLE_PATH, StaticFiles(directory=str(static), html=True), name="console")
    app.mount(_DOCS_ASSETS, StaticFiles(directory=str(swagger_ui_path)), name="docs-assets")

    @app.get(CONSOLE_PATH, include_in_schema=False)
    async def console_root(request: Request) -> RedirectResponse:
        return RedirectResponse(f"{_root(request)}{CONSOLE_PATH}/")

    @app.get(DOCS_PATH, include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        root = _root(request)
        return get_swagger_ui_html(
            openapi_url=f"{root}{app.openapi_url}",
            title=f"{app.title} - API",
            swagger_js_url=f"{root}{_DOCS_ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{_DOCS_ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{root}{_DOCS_ASSETS}/favicon-32x32.png",
            oauth2_redirect_url=f"{root}{_OAUTH2_REDIRECT}",
            swagger_ui_parameters={"validatorUrl": None},
        )

    @app.get(_OAUTH2_REDIRECT, include_in_schema=False)
    async def swagger_ui_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()


def _root(request: Request) -> str:
    return str(request.scope.get("root_path", "")).rstrip("/")


__all__ = ["CONSOLE_PATH", "DOCS_PATH", "install_console"]
