module.exports = {
  displayName: 'shared-errors',
  preset: '../../../jest.preset.js',
  rootDir: __dirname,
};
