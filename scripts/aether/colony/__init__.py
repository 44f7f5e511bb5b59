"""colony"""
