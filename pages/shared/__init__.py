"""Widgets and views shared by the pages (no computation: that lives in engine/)."""
